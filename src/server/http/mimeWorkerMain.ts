// Entry of a MIME worker thread (mimePool.ts): run from source by tests through tsx, and bundled
// as mimeWorker.js by the integration build (dist/ has a one-line mimeWorker.js that loads
// cli.js, which serves the jobs itself; esbuild.mjs).
import { isMimeWorker, serveMimeJobs } from './mimePool';

if (isMimeWorker()) serveMimeJobs();
