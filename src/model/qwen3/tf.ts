/**
 * tfjs-core with its two side-effect registrations that the core package alone lacks:
 * chained tensor methods (`x.mul(y)`, `x.reshape(…)`) and the gradients of every op
 * (without them: "gradient function not found for Neg"). Model code imports
 * tf from here.
 *
 * Order matters: the package entry first, so its side effects (flag registry incl. DEBUG,
 * platform, engine) have run before register_all_gradients executes. tfjs-core 4.22 lists
 * four gradients twice (Max, PadV2, SpaceToBatchND, SplitV), and re-registering one reads
 * env().getBool('DEBUG'). Under `vite` dev the dependency optimizer bundles each specifier
 * as its own entry and the deep-import chunk no longer pulls in flags.js, so with the deep
 * imports first the worker died with "Cannot evaluate flag 'DEBUG'".
 */
import '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import '@tensorflow/tfjs-core/dist/register_all_gradients';

export * from '@tensorflow/tfjs-core';
