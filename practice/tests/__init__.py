"""Tests of the practice scaffold generator."""
