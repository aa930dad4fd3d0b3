// One voice-agent turn with openai-node's realtime client (OpenAIRealtimeWS, on the `ws` package; it always
// connects with wss://), printing what it saw as one JSON line: event types, the text, each error (an error
// event's type and code, or the client's own message), and the close code and reason.
// Usage: node node_realtime.mjs BASE_URL PROXY_URL|- CELL|- [idle]   (trust: NODE_EXTRA_CA_CERTS)
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { HttpsProxyAgent } from "https-proxy-agent";

const [base, proxy, cell, idle] = process.argv.slice(2);
const client = new OpenAI({ apiKey: "sk-test", baseURL: `${base}/v1` });
const options = { headers: cell !== "-" ? { "x-flakeproxy-cell": cell } : {} };
if (proxy !== "-") options.agent = new HttpsProxyAgent(proxy);
const rt = new OpenAIRealtimeWS({ model: "gpt-realtime", options }, client);
const out = { types: [], text: "", errors: [], close: null };
const done = () => {
  console.log(JSON.stringify(out));
  process.exit(0);
};
rt.on("event", (e) => {
  out.types.push(e.type);
  if (e.type === "response.output_text.delta") out.text += e.delta;
  if (e.type === "response.done") rt.close();
});
rt.on("error", (err) => {
  // an error event's `error` object, or the client's own error (a message it could not parse, say)
  out.errors.push(err.error ? [err.error.type, err.error.code] : [err.message, null]);
});
rt.socket.on("open", () => {
  if (idle === "idle") return;
  const item = { type: "message", role: "user", content: [{ type: "input_text", text: "AAPL?" }] };
  rt.send({ type: "conversation.item.create", item });
  rt.send({ type: "response.create" });
});
rt.socket.on("close", (code, reason) => {
  out.close = [code, reason.toString()];
  done();
});
setTimeout(() => {
  out.timeout = true;
  done();
}, 10000);
