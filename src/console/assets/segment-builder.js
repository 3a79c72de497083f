// The segment builder's script (the page works without it: every button then posts the form).
// - A row shows only the inputs its kind uses (the kind's <option> says which: data-parts, data-ops,
//   data-value-label, data-hint), as soon as the kind changes.
// - "Add a condition" and "Remove condition N" change the rows in the page; the rows are numbered
//   again (names, ids, labels), focus moves to the new row or to the row that took the removed one's
//   place, and a status line says what happened.
// - The preview follows the form: 400 ms after the last change it posts the form to
//   data-preview-url and shows the answer (the count in a status line, the sample below). Answers that
//   come back out of order are dropped. Enter in a text input previews at once; "Save" posts the form.
// No inline script anywhere: the console's Content-Security-Policy allows only its own files.
'use strict';

(() => {
  const form = document.querySelector('form[data-segment-builder]');
  if (!form) return;
  const rowsBox = form.querySelector('[data-rows]');
  const template = document.getElementById('condition-template');
  const announce = form.querySelector('[data-builder-announce]');
  const status = document.querySelector('[data-preview-status]');
  const sample = document.querySelector('[data-preview-sample]');
  const addButton = form.querySelector('[data-add]');
  const previewUrl = form.getAttribute('data-preview-url');
  const maxRows = Number(form.getAttribute('data-max-rows')) || 50;
  const DELAY_MS = 400;

  const rows = () => Array.from(rowsBox.querySelectorAll('[data-row]'));
  const say = (text) => { if (announce) announce.textContent = text; };

  /** Shows the inputs the row's kind uses and allows its comparisons. */
  function applyKind(row) {
    const what = row.querySelector('[data-what]');
    const option = what && what.selectedOptions[0];
    if (!option) return;
    const parts = (option.getAttribute('data-parts') || '').split(' ').filter(Boolean);
    for (const box of row.querySelectorAll('[data-part]')) box.hidden = !parts.includes(box.getAttribute('data-part'));
    const ops = (option.getAttribute('data-ops') || '').split(' ').filter(Boolean);
    const op = row.querySelector('[data-op]');
    if (op && ops.length) {
      for (const o of op.options) o.disabled = !ops.includes(o.value);
      if (op.selectedOptions[0] && op.selectedOptions[0].disabled) op.value = ops[0];
    }
    const label = row.querySelector('label[data-value-label]');
    if (label) label.textContent = option.getAttribute('data-value-label') || 'Value';
    const hint = row.querySelector('small[data-value-hint]');
    if (hint) hint.textContent = option.getAttribute('data-hint') || '';
  }

  /** Numbers the rows 0.. again: input names and ids, labels, legends, remove buttons. */
  function renumber() {
    const all = rows();
    all.forEach((row, i) => {
      // `what_3`, `value_3-hint`, `row_3-error`: the row's index follows the part's name.
      for (const el of row.querySelectorAll('[id], [for], [name], [aria-describedby]')) {
        for (const attr of ['id', 'for', 'name', 'aria-describedby']) {
          const v = el.getAttribute(attr);
          if (v) el.setAttribute(attr, v.replace(/_(\d+|__i__)(?=$|-|\s)/g, `_${i}`));
        }
      }
      const legend = row.querySelector('[data-row-legend]');
      if (legend) legend.textContent = `Condition ${i + 1}`;
      const remove = row.querySelector('[data-remove]');
      if (remove) {
        remove.value = `remove:${i}`;
        remove.textContent = `Remove condition ${i + 1}`;
        remove.hidden = all.length <= 1;
      }
    });
    if (addButton) addButton.disabled = all.length >= maxRows;
  }

  function addRow() {
    if (!template || rows().length >= maxRows) return;
    const row = template.content.firstElementChild.cloneNode(true);
    rowsBox.appendChild(row);
    renumber();
    applyKind(row);
    row.querySelector('[data-what]').focus();
    say(`Condition ${rows().length} added.`);
    schedulePreview();
  }

  function removeRow(row) {
    const all = rows();
    const i = all.indexOf(row);
    if (i < 0 || all.length <= 1) return;
    row.remove();
    renumber();
    const left = rows();
    const next = left[Math.min(i, left.length - 1)];
    (next ? next.querySelector('[data-what]') : addButton).focus();
    say(`Condition ${i + 1} removed; ${left.length} left.`);
    schedulePreview();
  }

  let timer = 0;
  let sent = 0;
  let controller = null;

  function schedulePreview(delay = DELAY_MS) {
    clearTimeout(timer);
    timer = setTimeout(preview, delay);
  }

  async function preview() {
    if (!previewUrl || !status) return;
    const mine = ++sent;
    if (controller) controller.abort();
    controller = new AbortController();
    const body = new URLSearchParams(new FormData(form));
    body.set('action', 'preview');
    if (sample) sample.setAttribute('aria-busy', 'true');
    try {
      const res = await fetch(previewUrl, { method: 'POST', body, redirect: 'manual', credentials: 'same-origin', signal: controller.signal, headers: { accept: 'text/html' } });
      if (mine !== sent) return;
      if (res.type === 'opaqueredirect' || (res.status !== 200 && res.status !== 422)) {
        status.textContent = 'Could not count the contacts: reload the page (you may have been signed out).';
        status.removeAttribute('data-count');
        if (sample) sample.textContent = '';
        return;
      }
      const answer = document.createElement('template');
      answer.innerHTML = await res.text();
      if (mine !== sent) return;
      const count = answer.content.querySelector('[data-preview-count]');
      const list = answer.content.querySelector('[data-preview-sample]');
      if (count) {
        status.textContent = count.textContent;
        status.setAttribute('data-count', count.getAttribute('data-count') || '');
      }
      if (sample && list) sample.replaceChildren(...list.childNodes);
    } catch (err) {
      if (err && err.name === 'AbortError') return;
      if (mine === sent) status.textContent = 'Could not count the contacts: check your connection and try again.';
    } finally {
      if (mine === sent && sample) sample.removeAttribute('aria-busy');
    }
  }

  form.addEventListener('submit', (event) => {
    const action = event.submitter ? event.submitter.value : 'preview';
    if (action === 'save') return;
    event.preventDefault();
    if (action === 'add') addRow();
    else if (action.startsWith('remove:')) removeRow(event.submitter.closest('[data-row]'));
    else { clearTimeout(timer); preview(); }
  });

  form.addEventListener('change', (event) => {
    const target = event.target;
    if (target instanceof HTMLSelectElement && target.matches('[data-what]')) applyKind(target.closest('[data-row]'));
    schedulePreview();
  });
  form.addEventListener('input', (event) => {
    if (event.target instanceof HTMLInputElement && event.target.type === 'text') schedulePreview();
  });

  // The page came with its preview (or the hint to complete a condition): the first one is asked for
  // when the form changes.
  for (const row of rows()) applyKind(row);
  renumber();
})();
