// Builds ../static/editor.bundle.js from src/editor.js and the packages of
// package-lock.json (run by scripts/editor-bundle after npm ci). The
// bundle's first lines record the SHA-256 of its sources (sourcesDigest),
// which editor's Go tests recompute without npm: a bundle that does not
// match its sources fails them.
//
//   node build.mjs            writes ../static/editor.bundle.js
//   node build.mjs OUT        writes OUT instead (the rebuild test)
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync, statSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));

// sources are the files the bundle is made of, relative to this folder,
// in byte order of their names: the same list as sourceFiles in Go.
function sources() {
  const out = ['build.mjs', 'package-lock.json', 'package.json'];
  const walk = (dir) => {
    for (const name of readdirSync(join(here, dir))) {
      const rel = dir + '/' + name;
      if (statSync(join(here, rel)).isDirectory()) { walk(rel); } else { out.push(rel); }
    }
  };
  walk('src');
  return out.sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
}

// sourcesDigest hashes each source as its name, a newline, its length in
// bytes, a newline and its bytes.
function sourcesDigest() {
  const h = createHash('sha256');
  for (const rel of sources()) {
    const b = readFileSync(join(here, rel));
    h.update(rel + '\n' + b.length + '\n');
    h.update(b);
  }
  return h.digest('hex');
}

const out = process.argv[2] || join(here, '..', 'static', 'editor.bundle.js');
const result = await esbuild.build({
  entryPoints: [join(here, 'src', 'editor.js')],
  bundle: true,
  format: 'iife',
  target: ['es2020'],
  minify: true,
  legalComments: 'none',
  charset: 'utf8',
  write: false,
  logLevel: 'warning',
});
const header = '/* endpointkit editor bundle: src/editor.js of endpoint/editor/web with CodeMirror 6\n' +
  ' * (MIT licence, Marijn Haverbeke and others) and its packages, as package-lock.json\n' +
  ' * pins them; built by scripts/editor-bundle with esbuild. Do not edit: rebuild.\n' +
  ' * sources-sha256: ' + sourcesDigest() + ' */\n';
writeFileSync(out, header + result.outputFiles[0].text);
console.log('wrote ' + relative(process.cwd(), out) + ' (' + (header.length + result.outputFiles[0].contents.length) + ' bytes)');
