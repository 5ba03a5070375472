/**
 * tfjs-core with its two side-effect registrations that the core package alone lacks:
 * chained tensor methods (`x.mul(y)`, `x.reshape(…)`) and the gradients of every op
 * (without them: "gradient function not found for Neg"; RECIPE.md). Model code imports
 * tf from here.
 */
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import '@tensorflow/tfjs-core/dist/register_all_gradients';

export * from '@tensorflow/tfjs-core';
