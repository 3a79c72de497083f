// Console behaviour that needs script (everything else works without it):
// - the Copy button next to a newly created API key copies it and announces the result;
// - the new key's heading takes focus, so screen readers announce it;
// - the automation/campaign editor's WhatsApp template select shows the chosen template's parameters.
'use strict';

document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const input = document.getElementById(button.getAttribute('data-copy'));
  const status = document.querySelector('[data-copy-status]');
  if (!input) return;
  let copied = false;
  try {
    await navigator.clipboard.writeText(input.value);
    copied = true;
  } catch {
    input.focus();
    input.select();
    copied = document.execCommand && document.execCommand('copy');
  }
  if (status) status.textContent = copied ? 'Copied to the clipboard.' : 'Select the key and copy it yourself.';
});

document.addEventListener('DOMContentLoaded', () => {
  const heading = document.getElementById('new-key-title');
  if (heading) heading.focus();
});

document.addEventListener('change', (event) => {
  const select = event.target instanceof HTMLSelectElement && event.target.matches('[data-wa-template]') ? event.target : null;
  const help = select && document.querySelector('[data-wa-parameters]');
  if (!help) return;
  const option = select.selectedOptions[0];
  help.textContent = option ? option.getAttribute('data-help') || '' : '';
});
