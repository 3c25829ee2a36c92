/// <reference types="vitest/config" />
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Django (manage.py serve on :8000, or ZS_DEV_BACKEND) owns these paths; everything else is the SPA.
// No changeOrigin: Django's CSRF check compares the Origin header with the Host header, so
// the browser's Host (127.0.0.1:5173) must reach Django unchanged.
const backend = process.env.ZS_DEV_BACKEND ?? 'http://127.0.0.1:8000';
const backendPaths = ['/api', '/admin', '/static'];

export default defineConfig({
  base: '/',
  plugins: [react()],
  server: {
    port: 5173,
    proxy: {
      ...Object.fromEntries(backendPaths.map((path) => [path, { target: backend }])),
      '/ws': { target: backend, ws: true },
      // A running notebook (/notebooks/<id>/...) is proxied by Django; /notebooks is the SPA page.
      '^/notebooks/\\d+': { target: backend, ws: true },
    },
  },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    sourcemap: false,
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
    // Reusing one module graph per worker halves the CPU time (antd is costly to import).
    // Tests must therefore not depend on module state: src/test/setup.ts resets language,
    // storage, cookies and fetch before each test, and each render gets a fresh QueryClient.
    isolate: false,
    testTimeout: 30_000,
  },
});
