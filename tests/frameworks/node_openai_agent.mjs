// A Node agent on the official `openai` npm package, for agent.type: command: the prompt on stdin, the
// answer on stdout. One tool (get_quote -> GET TOOLS_URL/v1/quotes). AGENT_STREAM=1 streams the LLM's
// answers (STREAM_USAGE=1: with stream_options.include_usage); FORWARD_CELL=1 forwards FLAKEPROXY_CELL as the
// x-flakeproxy-cell header (run.attribution: header).
import OpenAI from "openai";

const stream = process.env.AGENT_STREAM === "1";
const cell = process.env.FORWARD_CELL === "1" ? process.env.FLAKEPROXY_CELL : undefined;
const headers = cell ? { "x-flakeproxy-cell": cell } : {};
const client = new OpenAI({ baseURL: process.env.LLM_URL, apiKey: "sk-fake", maxRetries: 2, timeout: 10000 });
const tools = [{
  type: "function",
  function: {
    name: "get_quote",
    description: "Get the latest price of a stock symbol from the market data API.",
    parameters: { type: "object", properties: { symbol: { type: "string" } }, required: ["symbol"] },
  },
}];

async function getQuote(symbol) {
  try {
    const r = await fetch(`${process.env.TOOLS_URL}/v1/quotes?symbol=${encodeURIComponent(symbol)}`, { headers });
    if (!r.ok) return `error: the quote API answered HTTP ${r.status}`;
    return await r.text();
  } catch (e) {
    return `error: the quote API could not be reached (${e.message})`;
  }
}

async function complete(messages) {
  const body = { model: "fake-model", messages, tools };
  if (!stream) return (await client.chat.completions.create(body, { headers })).choices[0].message;
  const message = { role: "assistant", content: "", tool_calls: [] };
  const usage = process.env.STREAM_USAGE === "1" ? { stream_options: { include_usage: true } } : {};
  for await (const chunk of await client.chat.completions.create({ ...body, stream: true, ...usage }, { headers })) {
    const delta = chunk.choices[0]?.delta ?? {};
    if (delta.content) message.content += delta.content;
    for (const call of delta.tool_calls ?? []) {
      const slot = (message.tool_calls[call.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.function.name += call.function.name;
      if (call.function?.arguments) slot.function.arguments += call.function.arguments;
    }
  }
  if (!message.tool_calls.length) delete message.tool_calls;
  return message;
}

let prompt = "";
for await (const piece of process.stdin) prompt += piece;
const messages = [
  { role: "system", content: "You answer questions about stock prices. Cite your source." },
  { role: "user", content: prompt.trim() },
];
for (let step = 0; step < 4; step++) {
  const message = await complete(messages);
  messages.push(message);
  if (!message.tool_calls) {
    process.stdout.write(message.content ?? "");
    process.exit(0);
  }
  for (const call of message.tool_calls) {
    let args = {};
    try { args = JSON.parse(call.function.arguments || "{}"); } catch { args = {}; }
    messages.push({ role: "tool", tool_call_id: call.id, content: await getQuote(args.symbol ?? "AAPL") });
  }
}
process.stderr.write("too many steps\n");
process.exit(1);
