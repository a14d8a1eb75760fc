// Bundles every screen module and style sheet under src/ into dist/ (see README.md).
//
// Entry points are found, never listed: src/<bundle>/screens/<name>.js and
// src/<bundle>/<name>.css become dist/<bundle>/<name>-<hash>.js|css. Code
// two screens share is split into dist/chunks/, so a screen downloads only
// what it uses. dist/manifest.json maps "<bundle>/<name>.js" to the
// fingerprinted file and lists every file the server may serve.
import * as esbuild from "esbuild";
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readFileSync } from "node:fs";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const SRC = "src";
const OUT = "dist";
const TMP = "dist.tmp";

function entryPoints() {
  const found = [];
  for (const bundle of readdirSync(SRC, { withFileTypes: true })) {
    if (!bundle.isDirectory()) continue;
    const base = path.join(SRC, bundle.name);
    const screens = path.join(base, "screens");
    if (existsSync(screens)) {
      for (const file of readdirSync(screens)) {
        if (file.endsWith(".js")) {
          found.push({ in: path.join(screens, file), out: `${bundle.name}/${file.slice(0, -3)}` });
        }
      }
    }
    for (const file of readdirSync(base)) {
      if (file.endsWith(".css")) {
        found.push({ in: path.join(base, file), out: `${bundle.name}/${file.slice(0, -4)}` });
      }
    }
  }
  return found;
}

// CodeMirror's styles (style-mod) go into a <style> element on a document,
// which a CSP without 'unsafe-inline' blocks; on a shadow root it uses a
// constructable style sheet (adoptedStyleSheets), which CSP allows. This
// makes it take the constructable sheet on documents too: every browser the
// admin supports has them (Chrome 73, Firefox 101, Safari 16.4).
const constructableStyles = {
  name: "constructable-styles",
  setup(build) {
    build.onLoad({ filter: /[\\/]style-mod[\\/]src[\\/]style-mod\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const patched = source.replace("if (!root.head && root.adoptedStyleSheets", "if (root.adoptedStyleSheets");
      if (patched === source) throw new Error("style-mod changed: review the constructable-styles patch");
      return { contents: patched, loader: "js" };
    });
  },
};

const entries = entryPoints();
rmSync(TMP, { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: entries,
  outdir: TMP,
  bundle: true,
  format: "esm",
  splitting: true,
  minify: true,
  sourcemap: "linked",
  target: ["es2022", "chrome110", "firefox110", "safari16"],
  entryNames: "[dir]/[name]-[hash]",
  chunkNames: "chunks/[name]-[hash]",
  assetNames: "files/[name]-[hash]",
  metafile: true,
  legalComments: "linked",
  logLevel: "warning",
  plugins: [constructableStyles],
});

const manifest = { entries: {}, files: [] };
for (const [output, info] of Object.entries(result.metafile.outputs)) {
  const name = path.relative(TMP, output).split(path.sep).join("/");
  manifest.files.push(name);
  if (info.entryPoint) {
    const entry = entries.find((e) => path.normalize(e.in) === path.normalize(info.entryPoint));
    if (entry) manifest.entries[entry.out + path.extname(name)] = name;
  }
}
manifest.files.sort();
// Compressed copies beside each script and sheet: the server (aiohttp's
// FileResponse) sends the .br or .gz one to a browser that accepts it.
for (const name of manifest.files) {
  if (!/\.(js|css)$/.test(name)) continue;
  const body = readFileSync(path.join(TMP, name));
  writeFileSync(path.join(TMP, `${name}.br`), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 10 } }));
  writeFileSync(path.join(TMP, `${name}.gz`), gzipSync(body, { level: 9 }));
}
writeFileSync(path.join(TMP, "manifest.json"), JSON.stringify(manifest, null, 1) + "\n");
rmSync(OUT, { recursive: true, force: true });
renameSync(TMP, OUT);
console.log(`built ${Object.keys(manifest.entries).length} entry points into ${OUT}/`);
