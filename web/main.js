// The demo page: starts raycontact-web's Demo on the canvas and steps it once a frame, showing
// each frame's contacts and times. Query parameters: seed (1), frames (stop after that many;
// 0, the default, runs on and restarts every 600 frames with the next seed), record (1: keep
// every frame's positions and counts for demo.trace(), which web/test-browser reads), backend
// ("cpu": raycontact's CPU backend in WebAssembly instead of WebGPU), tuning ("gpu" or
// "software": the kernels built for that kind of adapter instead of the adapter's own kind).
// window.raycontactDemo tells a test where the page is: status ("starting", "running",
// "done", "error"), info, frames (each frame's report), error, and trace() (base64).
import init, { Demo } from "./pkg/raycontact_web.js";

const params = new URLSearchParams(location.search);
const stopAfter = Number(params.get("frames") ?? 0);
const record = params.get("record") === "1";
const cpu = params.get("backend") === "cpu";
const tuning = params.get("tuning") ?? "";
let seed = Number(params.get("seed") ?? 1);
const page = { status: "starting", info: null, frames: [], error: null, trace: () => "" };
window.raycontactDemo = page;

const stats = document.getElementById("stats");
const fail = (e) => {
  page.status = "error";
  page.error = String(e && e.message ? e.message : e);
  document.getElementById("error").textContent = "error: " + page.error;
  stats.textContent = "stopped";
};

function base64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

async function start() {
  if (!navigator.gpu) {
    throw new Error("this browser has no WebGPU (navigator.gpu is missing)");
  }
  // The browser's own words for its adapter (wgpu's AdapterInfo has no name on the web).
  const gpu = (await navigator.gpu.requestAdapter())?.info;
  const t0 = performance.now();
  const demo = await Demo.start(document.getElementById("canvas"), seed, record, cpu, tuning);
  page.info = JSON.parse(demo.info());
  page.info.start_ms = performance.now() - t0;
  page.info.adapter = page.info.adapter || [gpu?.vendor, gpu?.architecture, gpu?.description].filter(Boolean).join(" ");
  page.trace = () => base64(demo.trace());
  const i = page.info;
  document.getElementById("info").textContent =
    `detection: ${i.detection}, on ${i.adapter || "an unnamed adapter"} (${i.storage_buffers_per_stage} storage buffers ` +
    `per stage, ${i.workgroup_storage} B of workgroup storage); ${i.pipelines} pipelines and the scene ready in ` +
    `${(i.start_ms / 1000).toFixed(1)} s\nseed ${i.seed}: ` +
    i.bodies.map((b) => `${b.name} (${b.vertices} vertices, ${b.triangles} triangles)`).join(", ");
  return demo;
}

async function run() {
  let demo = await start();
  page.status = "running";
  const ms = [];
  for (;;) {
    const t = performance.now();
    const f = JSON.parse(await demo.step());
    f.frame_ms = performance.now() - t;
    page.frames.push(f);
    ms.push(f.frame_ms);
    if (ms.length > 30) ms.shift();
    const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
    stats.textContent =
      `frame ${String(f.frame).padStart(4)}: ${f.contacts} contacts ` +
      `(${f.collisions} collisions, ${f.predictions} predictions)\n` +
      `frame ${f.frame_ms.toFixed(1)} ms (mean of ${ms.length}: ${mean.toFixed(1)}): detection ` +
      `${f.detect_ms.toFixed(1)}, integration ${f.integrate_ms.toFixed(1)}, drawing ${f.draw_ms.toFixed(1)}`;
    if (stopAfter > 0 && f.frame >= stopAfter) {
      page.status = "done";
      return;
    }
    if (stopAfter === 0 && f.frame >= 600) {
      seed += 1;
      demo.free();
      page.frames = [];
      demo = await start();
    }
    await new Promise(requestAnimationFrame);
  }
}

init().then(run).catch(fail);
