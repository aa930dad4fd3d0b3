// One call through the official openai or @anthropic-ai/sdk npm package; prints what the client saw as JSON.
// argv[2]: {"sdk", "base", "call", "maxRetries", "timeoutMs"}.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const spec = JSON.parse(process.argv[2]);
const messages = [{ role: "user", content: "What is AAPL trading at?" }];
const out = { error: null, status: null, finish: null, content: "", chunks: 0, request_id: false };
const oaiTools = [{ type: "function", function: { name: "get_quote", parameters: { type: "object" } } }];
const claudeTools = [{ name: "get_quote", description: "quote", input_schema: { type: "object", properties: {} } }];

async function openai() {
  const client = new OpenAI({ baseURL: spec.base + "/v1", apiKey: "sk-test", maxRetries: spec.maxRetries, timeout: spec.timeoutMs });
  if (spec.call === "json") {
    const r = await client.chat.completions.create({ model: "m", messages });
    out.content = r.choices[0].message.content ?? "";
    out.finish = r.choices[0].finish_reason;
    return;
  }
  const tools = spec.call === "tools_stream" ? { tools: oaiTools } : {};
  for await (const chunk of await client.chat.completions.create({ model: "m", messages, stream: true, ...tools })) {
    out.chunks += 1;
    for (const choice of chunk.choices) {
      out.content += choice.delta.content ?? "";
      for (const call of choice.delta.tool_calls ?? []) out.content += call.function?.arguments ?? "";
      out.finish = choice.finish_reason ?? out.finish;
    }
  }
}

async function anthropic() {
  const client = new Anthropic({ baseURL: spec.base, apiKey: "sk-ant-test", maxRetries: spec.maxRetries, timeout: spec.timeoutMs });
  const tools = spec.call === "tools_stream" ? { tools: claudeTools } : {};
  const body = { model: "m", max_tokens: 100, messages, ...tools };
  if (spec.call === "json") {
    const r = await client.messages.create(body);
    out.content = r.content[0].type === "text" ? r.content[0].text : JSON.stringify(r.content[0].input);
    out.finish = r.stop_reason;
    return;
  }
  const stream = client.messages.stream(body);
  stream.on("streamEvent", () => { out.chunks += 1; });
  const message = await stream.finalMessage();
  const block = message.content[0];
  out.content = block ? (block.type === "text" ? block.text : JSON.stringify(block.input)) : "";
  out.finish = message.stop_reason;
}

try {
  await (spec.sdk === "openai" ? openai() : anthropic());
} catch (err) {
  out.error = err.constructor.name;
  out.status = err.status ?? null;
  out.request_id = Boolean(err.requestID ?? err.request_id);
}
process.stdout.write(JSON.stringify(out) + "\n");
