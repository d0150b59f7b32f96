/**
 * Debian's Chromium for the dashboard's browser tests, driven by playwright-core: whether it can
 * run (installing it once if it is absent), a headless browser on a fresh profile, and a page
 * that records dialogs and CSP violations.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Why a browser test cannot run (undefined: it can), after trying `apt-get install chromium` once
 * per process; says so on the console when it cannot.
 */
export function chromiumMissing(): string | undefined {
  missing ??= { why: installed() };
  if (missing.why !== undefined) console.warn(`dashboard browser test SKIPPED: ${missing.why}`);
  return missing.why;
}

let missing: { why: string | undefined } | undefined;

function installed(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  try {
    execFileSync('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq chromium'], {
      stdio: 'ignore',
      timeout: 600_000,
    });
  } catch (error) {
    return `${CHROMIUM} is absent and apt-get install chromium failed (${(error as Error).message.split('\n')[0]})`;
  }
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is absent after apt-get install chromium`;
}

/** A headless Chromium on a fresh profile (`--user-data-dir`), removed by `close`. */
export interface Chromium {
  readonly browser: BrowserContext;
  /** The profile directory (a place for screenshots). */
  readonly profile: string;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'converge-chromium-'));
  let browser: BrowserContext;
  try {
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  return {
    browser,
    profile,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A page opened at `url` (answered 200), with the dialogs it opened and the CSP violations and errors it had. */
export async function openPage(
  browser: BrowserContext,
  url: string,
): Promise<{ page: Page; dialogs: string[]; violations: string[] }> {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  const violations: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (error) => violations.push(error.message));
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  return { page, dialogs, violations };
}
