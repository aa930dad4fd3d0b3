// A Node agent on the Vercel AI SDK, for agent.type: command: the prompt on stdin, the answer on stdout.
// streamText (ai) with @ai-sdk/openai's chat-completions model and one tool, get_quote, whose execute()
// fetches TOOLS_URL/v1/quotes; the tool's answer goes to the model as it is (naive). FLAKEPROXY_CELL, when
// set, goes as x-flakeproxy-cell on the LLM and tool calls (run.attribution: header).
import { streamText, tool, stepCountIs } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { z } from "zod";

const cell = process.env.FLAKEPROXY_CELL;
const headers = cell ? { "x-flakeproxy-cell": cell } : {};
const openai = createOpenAI({ baseURL: process.env.LLM_URL, apiKey: "sk-fake", headers });

const getQuote = tool({
  description: "Get the latest price of a stock symbol from the market data API.",
  inputSchema: z.object({ symbol: z.string() }),
  execute: async ({ symbol }) => {
    const url = `${process.env.TOOLS_URL}/v1/quotes?symbol=${encodeURIComponent(symbol)}`;
    const r = await fetch(url, { headers });
    return r.ok ? await r.text() : `error: the quote API answered HTTP ${r.status}`;
  },
});

let prompt = "";
for await (const piece of process.stdin) prompt += piece;
let failed;
const result = streamText({
  model: openai.chat("fake-model"),
  system: "You answer questions about stock prices. Cite your source.",
  prompt: prompt.trim(),
  tools: { get_quote: getQuote },
  stopWhen: stepCountIs(4),
  maxRetries: 1,
  onError: ({ error }) => { failed = error; },
});
let text = "";
for await (const delta of result.textStream) text += delta;
if (failed && !text) {
  process.stderr.write(`streamText failed: ${failed?.message ?? failed}\n`);
  process.exit(1);
}
process.stdout.write(text);
