// lib.mjs - Debian's chromium under playwright-core for the dashboard tests:
// a fresh profile, no background traffic, every request and console error
// recorded so a test can assert there were none.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function fail(msg) {
  console.log('FAIL: ' + msg);
  process.exit(1);
}

// before(page): called before the navigation (e.g. to route requests).
export async function open(url, { width = 1600, height = 1000, timeout = 30000, before = null } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'ct-chromium-'));
  const args = ['--headless=new', '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--no-first-run', '--no-default-browser-check', '--disable-default-apps', '--disable-extensions',
    '--disable-domain-reliability', '--metrics-recording-only', '--disable-breakpad'];
  if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args, viewport: { width, height },
  });
  const page = ctx.pages()[0] || (await ctx.newPage());
  const errors = [], requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  ctx.on('request', (r) => requests.push(r.url()));
  if (before) await before(page);
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]', { timeout });
  const ready_ms = Date.now() - t0;
  const close = async () => { await ctx.close(); rmSync(profile, { recursive: true, force: true }); };
  return { page, errors, requests, close, ready_ms };
}

// Pixels of the timeline canvas that are not its background, and distinct colours.
export async function canvasInk(page) {
  return page.evaluate(() => {
    const c = document.getElementById('timeline'), g = c.getContext('2d');
    const d = g.getImageData(0, 0, c.width, c.height).data;
    const bg = [d[0], d[1], d[2]];
    let ink = 0;
    const colours = new Set();
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] !== bg[0] || d[i + 1] !== bg[1] || d[i + 2] !== bg[2]) ink++;
      if (i % 64 === 0) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    }
    return { ink, total: d.length / 4, colours: colours.size };
  });
}
