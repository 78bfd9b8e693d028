// Entry of a MIME worker thread (mimePool.ts): run from source by tests through tsx, and bundled
// on its own as mimeWorker.js beside every bundle that holds the server (esbuild.mjs, the
// integration build).
import { isMimeWorker, serveMimeJobs } from './mimePool';

if (isMimeWorker()) serveMimeJobs();
