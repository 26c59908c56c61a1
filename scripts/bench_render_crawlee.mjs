// scripts/bench_render_crawlee.mjs: the Node side of scripts/bench-render, the same
// JavaScript site crawled by Crawlee's PuppeteerCrawler driving the same Chromium
// binary (puppeteer-core over a pipe; Crawlee and puppeteer-core from npm into a
// folder of the build, which NODE_PATH names; no browser downloaded).
//
//   node scripts/bench_render_crawlee.mjs START OUT.jsonl CONCURRENCY CHROMIUM
//
// CONCURRENCY pages at once (minConcurrency = maxConcurrency, so the autoscaler
// does not start lower), waiting for each page as luacrawl's networkidle does
// (puppeteer's networkidle0: no connection for 500 ms), links queued by enqueueLinks
// on the start's host. One JSON line per page: its URL and the number of links of
// its DOM. Crawlee's storage stays in memory (persistStorage false).
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const [start, out, conc, chromium] = process.argv.slice(2);
if (!start || !out || !conc || !chromium) {
  console.error("usage: node bench_render_crawlee.mjs START OUT.jsonl CONCURRENCY CHROMIUM");
  process.exit(2);
}
// The packages live in the build's npm folder, not beside this script.
const require = createRequire(join(process.env.BENCH_NPM_DIR || ".", "node_modules", "x.js"));
const { PuppeteerCrawler, Configuration, log } = require("crawlee");
const puppeteer = require("puppeteer-core");
log.setLevel(log.LEVELS.WARNING);

const n = Number(conc);
const lines = [];
const crawler = new PuppeteerCrawler({
  minConcurrency: n,
  maxConcurrency: n,
  maxRequestRetries: 2,
  navigationTimeoutSecs: 30,
  requestHandlerTimeoutSecs: 60,
  launchContext: {
    launcher: puppeteer,
    launchOptions: {
      executablePath: chromium,
      headless: true,
      pipe: true,
      args: process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : [],
    },
  },
  preNavigationHooks: [(_ctx, gotoOptions) => { gotoOptions.waitUntil = "networkidle0"; }],
  async requestHandler({ request, page, enqueueLinks }) {
    const links = await page.$$eval("a[href]", (as) => as.length);
    lines.push(JSON.stringify({ url: request.loadedUrl || request.url, links }));
    await enqueueLinks({ strategy: "same-hostname" });
  },
  failedRequestHandler({ request }, error) {
    console.error(`failed: ${request.url}: ${error.message}`);
  },
}, new Configuration({ persistStorage: false }));

await crawler.run([start]);
writeFileSync(out, lines.join("\n") + (lines.length ? "\n" : ""));
console.error(`bench_render_crawlee: ${lines.length} pages`);
