/**
 * The JavaScript, as source text, that boxes tool code in Node (threat model: docs/security.md).
 *
 * - CONTEXT_RUNNER_SOURCE: runs a call in a `vm` context (in the sandbox process, a fresh one
 *   made for that call alone). The arguments go in as JSON text and are parsed inside the
 *   context; the stub runs, is awaited and its value formatted inside it; only a string comes
 *   out. So no object of the host realm is reachable from tool code (`args.constructor.
 *   constructor` is the context's own Function), and the host never touches an object the
 *   tool made. A time limit covers the call, promise jobs included (`microtaskMode`).
 * - NODE_LOCKDOWN_SOURCE: what a sandbox process removes from itself before any tool code runs
 *   (signals to other processes, the network, native bindings, native file writers, the
 *   environment), on top of Node's permission model, which `nodeProcess.ts` starts it under.
 * - NODE_TOOL_PROCESS_SOURCE: the tool process's whole program (IPC loop around the runner).
 * Plain JS on purpose: it runs in a child `node -e` and in this process (InProcessExecutor).
 */
import { MAX_OUTPUT_CHARS, STUB_RUNTIME_SOURCE } from './runtimeSource';

/** Runs inside each fresh context after STUB_RUNTIME_SOURCE: calls the stub, writes a string. */
const CONTEXT_DRIVER_SOURCE = String.raw`
var __pactStub;
var __pactArgs;
var __pactResult;
var pactParseJson = JSON.parse;
function __pactStart() {
  __pactResult = undefined;
  if (typeof __pactStub !== 'function') { __pactResult = 'err:tool source does not evaluate to a function'; return; }
  var stub = __pactStub;
  new Promise(function (resolve) { resolve(stub(pactParseJson(__pactArgs))); })
    .then(function (value) { __pactResult = 'ok:' + formatToolOutput(value); })
    .catch(function (e) { __pactResult = 'err:' + describeError(e); })
    .catch(function () { __pactResult = 'err:unknown error'; });
}
`;

export const CONTEXT_RUNNER_SOURCE = String.raw`
function createContextRunner(vm, isProxy, options) {
  'use strict';
  var RUNTIME = ${JSON.stringify(STUB_RUNTIME_SOURCE + CONTEXT_DRIVER_SOURCE)};
  var MAX_CHARS = ${MAX_OUTPUT_CHARS};
  var isFreshPerCall = options.isFreshPerCall;
  var spareCount = options.spareCount || 1;
  var runtimeScript = new vm.Script(RUNTIME, { filename: 'tool-runtime.js' });
  var stubScripts = new Map();
  var spares = [];
  var shared = null;

  function makeBox() {
    var sandbox = Object.create(null);
    var context = vm.createContext(sandbox, {
      name: 'tool call',
      codeGeneration: { strings: false, wasm: false },
      microtaskMode: 'afterEvaluate',
    });
    runtimeScript.runInContext(context);
    return { sandbox: sandbox, context: context };
  }

  // The stub is defined and started in one evaluation; its promise jobs run before it returns.
  function compile(source) {
    var script = stubScripts.get(source);
    if (script) return script;
    script = new vm.Script('"use strict";\n__pactStub = (\n' + source + '\n);\n__pactStart();', { filename: 'tool.js' });
    if (stubScripts.size >= 512) stubScripts.clear();
    stubScripts.set(source, script);
    return script;
  }

  function cut(text) {
    return text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) + ' …[output cut at ' + MAX_CHARS + ' characters]' : text;
  }

  // Only a value thrown by Node itself is read; anything else came from tool code and is not touched.
  function isTimeout(e) {
    if (e === null || typeof e !== 'object' || isProxy(e)) return false;
    var code = Object.getOwnPropertyDescriptor(e, 'code');
    return code !== undefined && code.value === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
  }

  /** One call: {ok, output}. Never throws. */
  function run(source, argsJson, timeoutMs) {
    if (typeof source !== 'string') return { ok: false, output: 'tool source must be a string' };
    if (typeof argsJson !== 'string') return { ok: false, output: 'tool arguments must be JSON text' };
    if (!(timeoutMs > 0)) return { ok: false, output: 'timeoutMs must be a positive number' };
    var script;
    try {
      script = compile(source);
    } catch (e) {
      // A SyntaxError made by this realm's compiler, not by tool code.
      return { ok: false, output: cut(String(e && e.message)) };
    }
    var box = isFreshPerCall ? spares.pop() || makeBox() : (shared = shared || makeBox());
    try {
      box.sandbox.__pactArgs = argsJson;
      script.runInContext(box.context, { timeout: timeoutMs });
    } catch (e) {
      if (isTimeout(e)) return { ok: false, output: 'timed out after ' + timeoutMs + ' ms' };
      return { ok: false, output: 'the tool source threw while it was loaded' };
    }
    // Read as a data property of the context's global: a getter the tool defined is never called.
    var slot = Object.getOwnPropertyDescriptor(box.sandbox, '__pactResult');
    var result = slot ? slot.value : undefined;
    if (typeof result !== 'string') return { ok: false, output: 'the tool returned a promise that never settles (tool code has no timers or I/O)' };
    if (result.slice(0, 3) === 'ok:') return { ok: true, output: cut(result.slice(3)) };
    return { ok: false, output: cut(result.slice(0, 4) === 'err:' ? result.slice(4) : result) };
  }

  /** Makes one context for a later call ahead of time; false once enough are ready. */
  function prepare() {
    if (!isFreshPerCall || spares.length >= spareCount) return false;
    spares.push(makeBox());
    return true;
  }

  return { run: run, prepare: prepare };
}
`;

export const NODE_LOCKDOWN_SOURCE = String.raw`
function lockDownNodeProcess(getBuiltin) {
  'use strict';
  function deny(what) {
    return function denied() { throw new Error(what + ' is not available inside the tool sandbox'); };
  }
  function seal(owner, key, what) {
    if (!owner) return;
    try { Object.defineProperty(owner, key, { value: deny(what), writable: false, configurable: false, enumerable: false }); } catch (_) {}
  }
  function sealAll(owner, prefix) {
    if (!owner) return;
    var keys = Object.getOwnPropertyNames(owner);
    for (var i = 0; i < keys.length; i++) {
      var d = Object.getOwnPropertyDescriptor(owner, keys[i]);
      if (d && typeof d.value === 'function' && keys[i] !== 'constructor') seal(owner, keys[i], prefix + keys[i]);
    }
  }
  function load(name) { try { return getBuiltin(name); } catch (_) { return null; } }
  // Other processes: the permission model does not cover signals.
  seal(process, 'kill', 'process.kill');
  seal(process, '_kill', 'process._kill');
  seal(process, 'binding', 'process.binding');
  seal(process, '_linkedBinding', 'process._linkedBinding');
  seal(process, 'dlopen', 'process.dlopen');
  var os = load('node:os');
  if (os) seal(os, 'setPriority', 'os.setPriority');
  var v8 = load('node:v8');
  if (v8) seal(v8, 'setFlagsFromString', 'v8.setFlagsFromString');
  // Files Node writes from native code, which the permission model does not cover (the process
  // also sends them to /dev/null and runs in a throwaway folder: nodeProcess.ts).
  if (v8) seal(v8, 'setHeapSnapshotNearHeapLimit', 'v8.setHeapSnapshotNearHeapLimit');
  var traceEvents = load('node:trace_events');
  if (traceEvents) seal(traceEvents, 'createTracing', 'trace_events.createTracing');
  // The environment: the process starts with none; whatever a shell or Node added goes too.
  var envKeys = Object.keys(process.env);
  for (var e = 0; e < envKeys.length; e++) { try { delete process.env[envKeys[e]]; } catch (_) {} }
  // The network: Node 20's permission model does not cover it, so every way out is closed here.
  var net = load('node:net');
  if (net) {
    seal(net.Socket.prototype, 'connect', 'net.Socket.connect');
    seal(net.Server.prototype, 'listen', 'net.Server.listen');
    seal(net, 'connect', 'net.connect');
    seal(net, 'createConnection', 'net.createConnection');
  }
  var tls = load('node:tls');
  if (tls) seal(tls, 'connect', 'tls.connect');
  var dgram = load('node:dgram');
  if (dgram) {
    sealAll(dgram.Socket.prototype, 'dgram.Socket.');
    seal(dgram, 'createSocket', 'dgram.createSocket');
  }
  var dns = load('node:dns');
  if (dns) {
    sealAll(dns, 'dns.');
    if (dns.Resolver) sealAll(dns.Resolver.prototype, 'dns.Resolver.');
    if (dns.promises) {
      sealAll(dns.promises, 'dns.promises.');
      if (dns.promises.Resolver) sealAll(dns.promises.Resolver.prototype, 'dns.promises.Resolver.');
    }
  }
  var http = load('node:http');
  if (http) { seal(http, 'request', 'http.request'); seal(http, 'get', 'http.get'); }
  var https = load('node:https');
  if (https) { seal(https, 'request', 'https.request'); seal(https, 'get', 'https.get'); }
  var http2 = load('node:http2');
  if (http2) seal(http2, 'connect', 'http2.connect');
  var inspector = load('node:inspector');
  if (inspector) seal(inspector, 'open', 'inspector.open');
  var names = ['fetch', 'WebSocket', 'EventSource'];
  for (var n = 0; n < names.length; n++) seal(globalThis, names[n], names[n]);
  // An ES module view of a builtin (import('node:os')) keeps the functions it was made with
  // until told otherwise: bring every view made so far in line with the seals above.
  var moduleApi = load('node:module');
  if (moduleApi && typeof moduleApi.syncBuiltinESMExports === 'function') {
    try { moduleApi.syncBuiltinESMExports(); } catch (_) {}
  }
}
`;

/**
 * The tool process (CommonJS, run by `node -e`): locks itself down, then answers
 * `{id, source, argsJson, timeoutMs}` with `{id, ok, output}` over its IPC channel, one call at
 * a time, each in a fresh context (the next one is made while the process waits).
 * `process.argv` holds "--escape-drill" only when the parent asked for it (tests of the process
 * boundary): tool code then runs in this process's own realm, as if it had escaped its context.
 */
export const NODE_TOOL_PROCESS_SOURCE = String.raw`
'use strict';
var vm = require('node:vm');
var isProxy = require('node:util').types.isProxy;
var send = process.send.bind(process);
${CONTEXT_RUNNER_SOURCE}
${NODE_LOCKDOWN_SOURCE}
var runner = createContextRunner(vm, isProxy, { isFreshPerCall: true, spareCount: 4 });
var isEscapeDrill = process.argv.indexOf('--escape-drill') >= 0;
var drill = null;
if (isEscapeDrill) {
  // No shadowed globals: the code sees this realm's require, process and import() as an escapee would.
  drill = new Function('vm', ${JSON.stringify(STUB_RUNTIME_SOURCE)} +
    '\nevaluateStubSource = function (source) { return vm.runInThisContext("(" + source + "\\n)"); };\nreturn { runStub: runStub };')(vm);
}
lockDownNodeProcess(require);
function reply(id, r) {
  try { send({ id: id, ok: r.ok === true, output: String(r.output) }); } catch (_) {}
}
process.on('message', function (message) {
  var id = message && message.id;
  if (typeof id !== 'number') return;
  if (drill) {
    var args;
    try { args = JSON.parse(message.argsJson); } catch (e) { reply(id, { ok: false, output: 'bad arguments' }); return; }
    drill.runStub(message.source, args).then(function (r) { reply(id, r); });
    return;
  }
  reply(id, runner.run(message.source, message.argsJson, message.timeoutMs));
  setImmediate(refill);
});
// Contexts for later calls are made while the process waits, one per turn, so a call that
// arrives meanwhile waits for one context at most.
function refill() {
  if (runner.prepare()) setImmediate(refill);
}
process.on('disconnect', function () { process.exit(0); });
refill();
`;
