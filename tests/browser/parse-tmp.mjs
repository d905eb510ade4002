import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
const ctx = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox','--headless=new'] });
for (const f of process.argv.slice(2)) {
  const r = [];
  for (let i = 0; i < 3; i++) {
    const page = await ctx.newPage();
    await page.goto(pathToFileURL(f).href);
    r.push(await page.evaluate(() => window.corotracer.marks.start.toFixed(0)));
    await page.close();
  }
  console.log(f, r.join(' '));
}
await ctx.close();
