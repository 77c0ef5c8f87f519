/** The report's stylesheet, inlined in report.html (allowed by its hash in the Content-Security-Policy). */
export const kPageStyle = `
:root { --fg: #1d2328; --muted: #5f6b76; --line: #d8dee4; --bg: #ffffff; --panel: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 10px 16px; border-bottom: 1px solid var(--line); display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 18px; margin: 0; }
header .meta { color: var(--muted); }
nav { display: flex; gap: 4px; padding: 6px 16px; border-bottom: 1px solid var(--line); background: var(--panel); }
nav button { border: 1px solid var(--line); background: var(--bg); padding: 4px 12px; border-radius: 4px; cursor: pointer; font: inherit; }
nav button[aria-selected="true"] { background: var(--fg); color: var(--bg); }
.layout { display: flex; align-items: flex-start; }
main { flex: 1; min-width: 0; padding: 12px 16px; }
aside { width: 38%; max-width: 560px; border-left: 1px solid var(--line); padding: 12px 16px; max-height: calc(100vh - 90px); overflow: auto; position: sticky; top: 0; }
aside[hidden], section[hidden] { display: none; }
table.counts { border-collapse: collapse; margin-bottom: 12px; }
table.counts td, table.counts th { border: 1px solid var(--line); padding: 4px 10px; text-align: left; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
.controls { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 8px; align-items: center; }
.controls input, .controls select { font: inherit; padding: 3px 6px; }
.thead, .trow { display: grid; grid-template-columns: var(--cols); gap: 8px; padding: 0 6px; align-items: center; }
.thead { font-weight: 600; border-bottom: 1px solid var(--line); height: 28px; position: sticky; top: 0; z-index: 1; background: var(--bg); min-width: var(--table-width); }
.thead span { cursor: pointer; user-select: none; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.thead span[aria-sort="ascending"]::after { content: " ▲"; }
.thead span[aria-sort="descending"]::after { content: " ▼"; }
.thead .stat, .trow [data-stat] { text-align: right; }
/* The id stays in view when the table scrolls sideways. */
.thead [data-col="id"], .trow [data-col="id"] { position: sticky; left: 0; background: inherit; }
.trow { background: var(--bg); }
.viewport { height: 62vh; overflow: auto; position: relative; border: 1px solid var(--line); }
.spacer { position: relative; min-width: var(--table-width); }
.trow { position: absolute; left: 0; right: 0; height: 24px; cursor: pointer; border-bottom: 1px solid #eef1f4; }
.trow:hover { background: var(--panel); }
.trow span { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.status { font-weight: 600; }
.status-completed { color: #2e7d32; } .status-failed { color: #c62828; } .status-skipped { color: #757575; }
.status-in_progress { color: #1565c0; } .status-pending { color: #9a6700; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); padding: 6px 8px; border-radius: 4px; margin: 4px 0 10px; max-height: 40vh; overflow: auto; }
h2 { font-size: 16px; margin: 4px 0 8px; } h3 { font-size: 14px; margin: 10px 0 4px; }
.failure-group { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin-bottom: 10px; }
.chip { display: inline-block; border: 1px solid var(--line); border-radius: 10px; padding: 0 8px; margin: 2px; cursor: pointer; background: var(--bg); font: inherit; }
.graph { overflow: auto; border: 1px solid var(--line); max-height: 75vh; }
.graph svg text { font: 11px system-ui, sans-serif; pointer-events: none; }
.node, .bar, .aggregate { cursor: pointer; }
.timeline { max-height: 62vh; overflow-y: auto; overflow-x: hidden; border: 1px solid var(--line); }
.tl-spacer { position: relative; }
#timeline-chart { position: sticky; top: 0; display: block; cursor: grab; }
#timeline-chart text { font: 11px system-ui, sans-serif; fill: var(--fg); }
#timeline-chart .tl-name { font-size: 12px; cursor: pointer; }
#timeline-chart .tl-retries { fill: #ef6c00; font-weight: 600; }
#timeline-chart .wave-label, #timeline-chart .tick-label, #timeline-chart .tl-head { fill: var(--muted); }
.controls select { max-width: 40em; }
.callout { border-left: 4px solid #c62828; background: #fdecea; padding: 6px 10px; margin: 0 0 12px; font-weight: 600; }
.muted { color: var(--muted); }
`;
