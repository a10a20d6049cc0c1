// Loads the site in a real browser (Debian's Chromium, headless, driven by playwright-core),
// follows a division link, checks what a person sees, and saves screenshots.
// Usage: node browser.mjs BASE_URL SCREENSHOT_DIR
import { chromium } from "playwright-core";

const [base, screenshots] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
function check(condition, message) {
  if (!condition) {
    console.error(`FAILED: ${message}`);
    process.exit(1);
  }
}
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const response = await page.goto(base + "/");
  check(response.status() === 200, `GET / answered ${response.status()}`);
  const heading = await page.textContent("h1");
  check(heading.includes("Cobalt Ridge Instruments"), `h1 is ${heading}`);
  await page.screenshot({ path: `${screenshots}/index.png`, fullPage: true });

  const link = page.locator('#divisions a[href^="/divisions/"]').first();
  const divisionName = (await link.textContent()).trim();
  await Promise.all([page.waitForURL(/\/divisions\//), link.click()]);
  const text = await page.textContent("body");
  check(text.includes("Cobalt Ridge Instruments"), "the division page does not name the company");
  check(text.includes(divisionName), `the division page does not show ${divisionName}`);
  check((await page.textContent("h1")).trim() === divisionName, "the division page's heading is not the division");
  await page.screenshot({ path: `${screenshots}/division.png`, fullPage: true });

  // Narrow screens get the same content without horizontal scrolling.
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `the division page scrolls sideways by ${overflow}px on a phone`);
  await page.screenshot({ path: `${screenshots}/division-phone.png`, fullPage: true });
  console.log(JSON.stringify({ ok: true, division: divisionName, url: page.url() }));
} finally {
  await browser.close();
}
