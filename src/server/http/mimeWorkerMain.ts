// Entry of a MIME worker thread when the server runs from source (tests, through tsx); the
// bundled CLI runs itself as the worker instead (cli.ts).
import { isMimeWorker, serveMimeJobs } from './mimePool';

if (isMimeWorker()) serveMimeJobs();
