#!/usr/bin/env node
// A chat agent in Node.js with no npm packages, for flakeproxy conversations (agent.type: command).
//
// conversation: one_process (the default here): flakeproxy starts it once per episode and writes each turn
// of the conversation on its stdin as one line; it answers each with one line on stdout, keeping the
// conversation in memory. stdin closes after the last turn.
//
// --per-turn (conversation: process_per_turn): one process per turn, the turn on stdin; the conversation is
// kept in STATE_DIR/<FLAKEPROXY_SESSION>.json between turns (FLAKEPROXY_SESSION: a fresh id per episode).
//
// Its LLM calls go to LLM_URL (flakeproxy's listener), with x-flakeproxy-cell from FLAKEPROXY_CELL.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const LLM_URL = process.env.LLM_URL || "http://127.0.0.1:8701";
const CELL = process.env.FLAKEPROXY_CELL;

async function ask(messages) {
  const headers = { "content-type": "application/json", ...(CELL ? { "x-flakeproxy-cell": CELL } : {}) };
  for (let attempt = 0; ; attempt++) {
    const r = await fetch(`${LLM_URL}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "m", messages }),
    });
    if (r.status === 429 && attempt < 2) {
      const wait = Number(r.headers.get("retry-after") || "1");
      await new Promise((done) => setTimeout(done, wait * 1000));
      continue;
    }
    if (!r.ok) return `Sorry, my model is not answering right now (HTTP ${r.status}).`;
    const body = await r.json();
    return body.choices[0].message.content.replace(/\s+/g, " ");
  }
}

async function oneProcess() {
  const messages = [];
  for await (const line of createInterface({ input: process.stdin })) {
    messages.push({ role: "user", content: line });
    const answer = await ask(messages);
    messages.push({ role: "assistant", content: answer });
    process.stdout.write(answer + "\n");
  }
}

async function perTurn() {
  let prompt = "";
  for await (const chunk of process.stdin) prompt += chunk;
  const file = join(process.env.STATE_DIR || ".", `${process.env.FLAKEPROXY_SESSION}.json`);
  const messages = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : [];
  messages.push({ role: "user", content: prompt.trim() });
  const answer = await ask(messages);
  messages.push({ role: "assistant", content: answer });
  writeFileSync(file, JSON.stringify(messages));
  console.log(answer);
}

await (process.argv.includes("--per-turn") ? perTurn() : oneProcess());
