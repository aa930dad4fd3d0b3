"""The HTML report's inline stylesheet: light and dark (prefers-color-scheme), print, phone widths."""

CSS = """
:root{--bg:#fff;--fg:#1d232b;--muted:#5b6673;--line:#dde2e8;--card:#f6f8fa;--code:#f0f2f5;
--pass:#1f8a4c;--pass-bg:#dcf5e4;--fail:#c4302b;--fail-bg:#fde0de;--error:#a35f00;--error-bg:#fff0cc;
--na:#6b7480;--na-bg:#eceff2;--open:#5b3fb0;--open-bg:#ece6fb;--link:#0b63c4}
@media (prefers-color-scheme:dark){:root{--bg:#0f1318;--fg:#e3e8ee;--muted:#9aa6b2;--line:#2a323c;
--card:#171d24;--code:#1c232b;--pass:#4cc47f;--pass-bg:#133824;--fail:#ff6b63;--fail-bg:#4a1716;
--error:#f2b84b;--error-bg:#432f08;--na:#8d98a4;--na-bg:#232a33;--open:#b9a6ff;--open-bg:#2c2347;
--link:#6cb2ff}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,"DejaVu Sans",sans-serif}
main{max-width:1180px;margin:0 auto;padding:16px 20px 48px}
a{color:var(--link)}
h1{font-size:1.5rem;margin:.2rem 0}
h2{font-size:1.2rem;margin:2rem 0 .6rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:0}
code,pre{font:13px/1.45 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace}
pre{background:var(--code);padding:8px 10px;border-radius:6px;white-space:pre-wrap;word-break:break-word;
margin:.3rem 0;max-height:24rem;overflow:auto}
.top{display:flex;flex-wrap:wrap;gap:16px 28px;align-items:center;padding:18px 20px;border-radius:10px;
background:var(--card);border:1px solid var(--line);border-left:8px solid var(--na)}
.top.v-PASS{border-left-color:var(--pass)}.top.v-FAIL{border-left-color:var(--fail)}
.top.v-INCOMPLETE{border-left-color:var(--error)}.top.v-INCONCLUSIVE{border-left-color:var(--open)}
.verdict{font-size:2rem;font-weight:800;letter-spacing:.04em;padding:4px 16px;border-radius:8px}
.v-PASS .verdict{color:var(--pass);background:var(--pass-bg)}
.v-FAIL .verdict{color:var(--fail);background:var(--fail-bg)}
.v-INCOMPLETE .verdict{color:var(--error);background:var(--error-bg)}
.v-INCONCLUSIVE .verdict{color:var(--open);background:var(--open-bg)}
.score b{font-size:2rem;display:block;line-height:1.1}
.score span,.meta,.muted{color:var(--muted)}
.meta{font-size:.85rem;margin:.2rem 0 0;overflow-wrap:anywhere}
.title{flex:1 1 320px;min-width:0}
.banner{margin:14px 0;padding:10px 14px;border-radius:8px;background:var(--error-bg);color:var(--fg);
border:1px solid var(--error)}
.intro{color:var(--muted);max-width:95ch}
ul.reasons li{margin:.2rem 0}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;border:1px solid var(--line);border-radius:8px}
table{border-collapse:collapse;width:100%}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
.matrix th,.matrix td{vertical-align:middle}
th{font-weight:600;font-size:.85rem;color:var(--muted);background:var(--card)}
table.matrix{width:auto;min-width:100%}
.matrix th.inv{position:sticky;left:0;background:var(--card);z-index:1;white-space:nowrap;color:var(--fg)}
.matrix thead th{white-space:nowrap;text-align:center}
.matrix td{text-align:center;padding:3px}
.matrix td a,.matrix td span{display:block;min-width:54px;padding:6px 6px;border-radius:6px;
font-weight:700;font-size:.8rem;text-decoration:none}
.o-pass{color:var(--pass);background:var(--pass-bg)}.o-fail{color:var(--fail);background:var(--fail-bg)}
.o-error{color:var(--error);background:var(--error-bg)}.o-not_applicable{color:var(--na);background:var(--na-bg)}
.o-inconclusive{color:var(--open);background:var(--open-bg)}
.o-missing{color:var(--na);background:repeating-linear-gradient(45deg,var(--na-bg) 0 6px,transparent 6px 12px)}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:.75rem;font-weight:700;
white-space:nowrap}
.legend{display:flex;flex-wrap:wrap;gap:8px;margin:.6rem 0;font-size:.85rem}
.cell{border:1px solid var(--line);border-radius:8px;margin:.6rem 0;background:var(--bg)}
.cell>summary{cursor:pointer;padding:10px 12px;display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}
.cell>summary h3{display:inline}
.cell>summary::before{content:"\\25B8";color:var(--muted)}.cell[open]>summary::before{content:"\\25BE"}
.cell .body{padding:0 12px 12px}
.verdict-box{border-top:1px dashed var(--line);padding-top:8px;margin-top:8px}
ol.transcript{margin:0;padding-left:1.4rem}ol.transcript li.turn{margin-bottom:6px}ol.transcript pre{margin:2px 0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.4rem 0}
dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;min-width:0;word-break:break-word}
.timeline td:nth-child(1),.timeline td:nth-child(2),.timeline td:nth-child(6){white-space:nowrap;
font-variant-numeric:tabular-nums}
.f-applied{color:var(--fail);background:var(--fail-bg)}.f-not{color:var(--na);background:var(--na-bg)}
.retry{color:var(--error);background:var(--error-bg)}
.num{text-align:right;font-variant-numeric:tabular-nums}
.side{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:12px;align-items:start}
.spantree{border:1px solid var(--line);border-radius:8px;padding:6px 10px}.spantree h4{margin:.2rem 0}
ul.spans{list-style:none;margin:0;padding-left:14px;border-left:1px dotted var(--line)}ul.spans li{margin:2px 0}
footer{margin-top:3rem;color:var(--muted);font-size:.8rem}
@media (max-width:640px){main{padding:10px}.side{grid-template-columns:1fr}
.top{padding:12px}.verdict,.score b{font-size:1.5rem}
th,td{padding:5px 6px}}
@media print{body{background:#fff;color:#000;font-size:11pt}main{max-width:none;padding:0}
.scroll{overflow:visible;border:0}details::details-content{content-visibility:visible;display:block}
.cell{break-inside:avoid}a{color:inherit;text-decoration:none}pre{max-height:none}
.matrix td a,.matrix td span,.badge,.verdict{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""
