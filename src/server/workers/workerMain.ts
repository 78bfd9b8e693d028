// Entry of a MIME worker thread (workers/pool.ts): run from source by tests through tsx, and bundled
// as mimeWorker.js by the integration build (dist/ has a one-line mimeWorker.js that loads
// cli.js, which serves the jobs itself; esbuild.mjs).
import { isMimeWorker, serveMimeJobs } from './pool';

if (isMimeWorker()) serveMimeJobs();
