// Node ESM resolve hook for running the tfjs-core ESM sources under Node (the CLI,
// `npm run bench`). tfjs-core's `dist/*.js` use extensionless relative imports
// (`export * from './gradients'`), which Node's ESM resolver rejects
// (ERR_UNSUPPORTED_DIR_IMPORT / ERR_MODULE_NOT_FOUND); Vite and vitest resolve them.
// Importing `@tensorflow/tfjs-core/dist/register_all_gradients` (required: the CJS
// bundle registers no gradients and no chained ops) therefore needs this hook in Node:
//
//   import { register } from 'node:module';
//   register(new URL('../src/model/qwen3/nodeResolveHook.mjs', import.meta.url));
//
// It only retries failed relative imports made from inside node_modules/@tensorflow/
// with '.js' appended.
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    const isFromTfjs =
      typeof context.parentURL === 'string' && context.parentURL.includes('/node_modules/@tensorflow/');
    const isRelative = specifier.startsWith('./') || specifier.startsWith('../');
    if (isFromTfjs && isRelative && !specifier.endsWith('.js')) return next(`${specifier}.js`, context);
    throw err;
  }
}
