#!/usr/bin/env node
// A finance agent in Node.js with no npm packages: it knows only two base URLs, which point at
// flakeproxy's listeners (TOOLS_URL, LLM_URL), so every call it makes can be broken on the wire.
// Wiring: agent.type: command, command: ["node", "examples/node-agent/agent.js"], the prompt on
// stdin, the answer on stdout; a non-zero exit is an agent error.
const TOOLS_URL = process.env.TOOLS_URL || "http://127.0.0.1:8702";
const LLM_URL = process.env.LLM_URL || "http://127.0.0.1:8701";

async function readStdin() {
  let data = "";
  for await (const chunk of process.stdin) data += chunk;
  return data.trim();
}

async function main() {
  const prompt = await readStdin();
  let quote = null;
  try {
    const r = await fetch(`${TOOLS_URL}/v1/quotes?symbol=AAPL`);
    if (r.ok) quote = await r.json();
  } catch (e) {
    quote = null;
  }
  if (quote === null) {
    console.log("I can't retrieve the current price right now: the market data source is unavailable.");
    return;
  }
  const r = await fetch(`${LLM_URL}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: `${prompt} ${JSON.stringify(quote)}` }] }),
  });
  if (!r.ok) {
    console.error(`LLM answered HTTP ${r.status}`);
    process.exit(2);
  }
  const body = await r.json();
  console.log(body.choices[0].message.content);
}

main().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
