// The site's own script: a full-size view of every diagram, and search queries whose Vietnamese
// tone marks sit where the index has them. No request leaves the page.
"use strict";

// --- Search: one tone-mark placement ------------------------------------------------------
// docs_tools/site_hooks.py stores every indexed word with the tone mark of oa, oe and uy on the
// second vowel ("huỷ", not "hủy"); a query is read the same way. Keep the two in step.
const OLD_TONE_PLACEMENT =
  /([oO])([\u0300\u0301\u0303\u0309\u0323])([aAeE])|([uU])([\u0300\u0301\u0303\u0309\u0323])([yY])/g;

function normaliseTones(text) {
  return text
    .normalize("NFD")
    .replace(OLD_TONE_PLACEMENT, (_, o, oTone, vowel, u, uTone, y) =>
      o ? o + vowel + oTone : u + y + uTone,
    )
    .normalize("NFC");
}

// Material reads the query from the input's `value`; this input answers it normalised, while
// the reader keeps seeing exactly what they typed.
function normaliseSearchQueries() {
  const native = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
  for (const input of document.querySelectorAll("input.md-search__input")) {
    Object.defineProperty(input, "value", {
      configurable: true,
      get() {
        return normaliseTones(native.get.call(this));
      },
      set(text) {
        native.set.call(this, text);
      },
    });
  }
}

// --- Code in tables: identifiers stay whole ------------------------------------------------
// A code span with no space is one identifier, path or literal: broken across two lines it
// reads as two ("object_schem" / "a"), so it is kept on one line. A probe citation
// (compare/test_NN_....py::test_...) is a path too long for a column: it may wrap, but only
// after "/", "::" or "_", where a reader sees the seam. docs_tools/site_check.py holds every
// other code span of a table to one line at 1280 px.
const PROBE_CITATION = /^compare\/[\w/.-]+::test_\w+$/;

function keepTableCodeWhole() {
  for (const code of document.querySelectorAll(".md-typeset table code")) {
    const text = code.textContent;
    if (PROBE_CITATION.test(text)) {
      code.classList.add("probe");
      const parts = text.split(/(?<=\/|::|_)/);
      code.replaceChildren(
        ...parts.flatMap((part, i) =>
          i === 0 ? [part] : [document.createElement("wbr"), part],
        ),
      );
    } else if (!/\s/.test(text)) {
      code.classList.add("whole");
    }
  }
}

// --- Diagrams: open any one full size -----------------------------------------------------
// Material draws each <pre class="mermaid"> into a closed shadow root, scaled to the column.
// Before it does, each block's source is kept and a button added under it; the button draws
// the same source again with the same Mermaid, at its natural size, in a dialog that scrolls.
const LABELS = {
  en: { open: "Open the diagram full size", close: "Close" },
  vi: { open: "Xem sơ đồ ở kích thước đầy đủ", close: "Đóng" },
};

function labels() {
  return LABELS[document.documentElement.lang] || LABELS.en;
}

function addFullSizeButtons() {
  document.querySelectorAll("pre.mermaid").forEach((block, index) => {
    const source = block.textContent;
    const figure = document.createElement("div");
    figure.className = "diagram";
    block.replaceWith(figure);
    figure.append(block);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "diagram__open md-button";
    button.textContent = labels().open;
    button.addEventListener("click", () => showFullSize(source, index));
    figure.append(button);
  });
}

async function showFullSize(source, index) {
  const dialog = document.createElement("dialog");
  dialog.className = "diagram-full";
  const close = document.createElement("button");
  close.type = "button";
  close.className = "diagram-full__close md-button";
  close.textContent = labels().close;
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  const { svg } = await window.mermaid.render(`diagram-full-${index}`, source);
  const body = document.createElement("div");
  body.className = "diagram-full__body";
  body.innerHTML = svg;
  const drawing = body.querySelector("svg");
  drawing.style.maxWidth = "none";
  drawing.setAttribute("width", `${drawing.viewBox.baseVal.width}`);
  drawing.setAttribute("height", `${drawing.viewBox.baseVal.height}`);
  dialog.append(close, body);
  document.body.append(dialog);
  dialog.showModal();
}

addFullSizeButtons();
normaliseSearchQueries();
keepTableCodeWhole();
