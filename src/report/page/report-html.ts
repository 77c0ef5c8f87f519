import { createHash } from 'node:crypto';
import { embedJsonParts } from './embed-json.js';
import { kPageScriptCore } from './page-script-core.js';
import { kPageScriptGraphs } from './page-script-graphs.js';
import { kPageScriptTable } from './page-script-table.js';
import { kPageScriptTimeline } from './page-script-timeline.js';
import { kPageStyle } from './page-style.js';
import type { ReportData } from '../report-data.js';

const kScript = `(function () {\n'use strict';\n${kPageScriptCore}\n${kPageScriptTable}\n${kPageScriptTimeline}\n${kPageScriptGraphs}\n})();\n`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The Content-Security-Policy of the page: only its own script and style run (by hash), no
 * other script, no fetch but to its own origin (the live view's change notices and `/data`), no form, no base.
 * Even an element that got into the page could neither run nor load anything.
 */
const kCsp = [
  "default-src 'none'",
  `script-src ${sha256(kScript)}`,
  `style-src ${sha256(kPageStyle)}`,
  'img-src data:',
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const kHead =
  '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
  `<meta http-equiv="Content-Security-Policy" content="${kCsp}">\n` +
  '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
  '<meta name="referrer" content="no-referrer">\n' +
  '<title>csv-wave report</title>\n' +
  `<style>${kPageStyle}</style>\n</head>\n<body>\n` +
  '<script type="application/json" id="report-data">';
const kTail = `</script>\n<script>${kScript}</script>\n</body>\n</html>\n`;
const kHeadBytes = Buffer.from(kHead, 'utf8');
const kTailBytes = Buffer.from(kTail, 'utf8');

/** Characters of the page handed to the writer at a time: few system calls, and never the whole page as one string. */
const kPieceChars = 1 << 20;

/**
 * The self-contained report page, in pieces of about a megabyte: data as JSON in a
 * non-executed script element, rendered by the inline script. A million tasks make a page
 * of some 200 MB; built as one string, it was held three times over (the JSON, its escaped
 * copy, the page) at the end of a run.
 */
export function* reportHtmlParts(data: ReportData): Generator<string> {
  let pending = kHead;
  for (const part of embedJsonParts(data)) {
    pending += part;
    if (pending.length >= kPieceChars) {
      yield pending;
      pending = '';
    }
  }
  yield pending + kTail;
}

/**
 * The same page around data already made into text by `embedJson`, as bytes: `serve` makes
 * the text once per change, sends it alone as `/data`, and builds the page from it without
 * a second copy of the data as a string.
 */
export function reportPage(embedded: Buffer): Buffer {
  return Buffer.concat([kHeadBytes, embedded, kTailBytes]);
}
