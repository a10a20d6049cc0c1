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
  // No fact's value (an LEI is 20 characters without a break) spills out of its card.
  const spills = await page.evaluate(() => [...document.querySelectorAll(".facts div")]
    .filter((card) => card.scrollWidth > card.clientWidth + 1)
    .map((card) => card.textContent.trim()));
  check(spills.length === 0, `facts overflow their cards at 1200px: ${spills.join("; ")}`);

  const link = page.locator('#divisions a[href^="/divisions/"]').first();
  const divisionName = (await link.textContent()).trim();
  await Promise.all([page.waitForURL(/\/divisions\//), link.click()]);
  const text = await page.textContent("body");
  check(text.includes("Cobalt Ridge Instruments"), "the division page does not name the company");
  check(text.includes(divisionName), `the division page does not show ${divisionName}`);
  check((await page.textContent("h1")).trim() === divisionName, "the division page's heading is not the division");
  await page.screenshot({ path: `${screenshots}/division.png`, fullPage: true });
  const divisionUrl = page.url();

  // Narrow screens get the same content without horizontal scrolling.
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `the division page scrolls sideways by ${overflow}px on a phone`);
  await page.screenshot({ path: `${screenshots}/division-phone.png`, fullPage: true });
  await page.goto(base + "/");
  const indexOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(indexOverflow <= 1, `the home page scrolls sideways by ${indexOverflow}px on a phone`);
  await page.screenshot({ path: `${screenshots}/index-phone.png`, fullPage: true });

  // The API page: the endpoint table uses the width it has, long descriptions fold away,
  // and the auth.md address is a link.
  await page.setViewportSize({ width: 1200, height: 900 });
  await page.goto(base + "/docs");
  const widths = await page.evaluate(() => ({
    table: document.querySelector("table.endpoints").getBoundingClientRect().width,
    main: document.querySelector("main").clientWidth,
  }));
  check(widths.table >= 0.9 * (widths.main - 40), `the endpoint table is ${widths.table}px wide in ${widths.main}px`);
  check(await page.locator(`a[href="${base}/auth.md"]`).count() > 0, "the auth.md address on /docs is not a link");
  const tallest = await page.evaluate(() => Math.max(...[...document.querySelectorAll("table.endpoints tr")].map((row) => row.getBoundingClientRect().height)));
  check(tallest < 120, `an endpoint row is ${tallest}px tall`);
  await page.screenshot({ path: `${screenshots}/docs.png` });
  console.log(JSON.stringify({ ok: true, division: divisionName, url: divisionUrl }));
} finally {
  await browser.close();
}
