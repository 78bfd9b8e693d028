// The message's texts live with the client (src/api/messageText.ts), where the extension and
// the test library (src/testing) both read them; re-exported here for the extension's modules.
export { messageBodies, messageTexts, type MessageBodies, type MessageTexts } from '../api/messageText';
