/** Types of chromium.mjs (plain ESM, loaded by plain-node scripts too). */

/** $CHROMIUM_PATH, else Debian's /usr/bin/chromium. */
export function chromiumPath(): string;

/** Whether chromiumPath() exists. */
export function hasChromium(): boolean;

/** Chromium's launch flags (WebGPU needs exactly --enable-unsafe-webgpu). */
export const CHROMIUM_ARGS: string[];
