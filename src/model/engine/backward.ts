/**
 * The training backward of forward.ts: gradients of Σ gLogp·logp + Σ gEnt·entropy with
 * respect to the parameters asked for, walking back from the LM head through the final
 * norm and the layers (each layer's activations freed once its backward has run) to the
 * embedding. Releases the forward context, whatever happens.
 */
import { attendSegmentsBackward } from './attention';
import type { EngineCore } from './core';
import { releaseForward, type ForwardContext } from './forward';
import { GradBuffers } from './gradBuffers';
import { layerBackward, releaseLayerActs } from './layer';
import { headBackward } from './lmHead';
import { EMBED, FINAL_NORM } from './names';

/**
 * Gradients by name (HF names; LoRA matrices as loraGradName(weight, 'A' | 'B')) of the
 * parameters in `gradNames`; a name whose gradient never formed is absent.
 */
export function runBackward(
  e: EngineCore,
  ctx: ForwardContext,
  gLogp: readonly ArrayLike<number>[],
  gEnt: readonly ArrayLike<number>[] | null,
  gradNames: ReadonlySet<string>,
): Map<string, Float32Array> {
  if (ctx.isReleased) throw new Error('engine.backward: the forward context was released');
  const { rt, H, V } = e;
  const P = ctx.params;
  const { plan } = ctx;
  const { N } = plan;
  const grads = new GradBuffers(rt, gradNames);
  try {
    const dxnF = headBackward(e, P, ctx.head, N, ctx.xnF, ctx.headLse, gLogp, gEnt, grads);
    const dx = rt.alloc(N * H);
    const gNorm = grads.get(FINAL_NORM, H) ?? 0;
    rt.k.rmsnormBwd(ctx.xL, H, e.weights.ptr(P.get(FINAL_NORM)), dxnF, H, ctx.rstdF, dx, H, gNorm, N, H, 0);
    rt.release(dxnF);
    for (let i = ctx.layers.length - 1; i >= 0; i--) {
      const a = ctx.layers[i];
      layerBackward(e, P, i, a, dx, N, ctx.pos, grads, (acts, dO, dq, dk, dv) =>
        attendSegmentsBackward(e, acts, plan, dO, dq, dk, dv),
      );
      releaseLayerActs(e, a, true); // its input x (the previous layer's output) is not read again
    }
    const gEmb = grads.get(EMBED, V * H);
    if (gEmb) rt.k.embedBwd(ctx.ids, N, dx, H, gEmb);
    rt.release(dx);
    return grads.collect();
  } finally {
    grads.dispose();
    releaseForward(e, ctx);
  }
}
