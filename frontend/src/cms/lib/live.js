// The realtime socket (content/realtime): a ticket for this session, then
// `entry:<id>` for presence and for saves made by others.
import { api } from "./api.js";

export function watch(topic, { onPresence, onEvent }) {
  let socket = null;
  let stopped = false;
  let delay = 1000;
  async function connect() {
    const { ok, data } = await api("POST", "/realtime/ticket");
    if (!ok || stopped) return retry();
    socket = new WebSocket(data.url);
    socket.addEventListener("message", (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch {
        return;
      }
      if (frame.type === "ready") {
        delay = 1000;
        socket.send(JSON.stringify({ action: "subscribe", topic }));
      } else if (frame.topic === topic && frame.event === "presence") {
        onPresence(frame.data.viewers || []);
      } else if (frame.topic === topic && frame.event) {
        onEvent(frame);
      }
    });
    socket.addEventListener("close", retry);
  }
  function retry() {
    if (stopped) return;
    setTimeout(connect, delay);
    delay = Math.min(delay * 2, 30000);
  }
  connect();
  return () => {
    stopped = true;
    if (socket) socket.close();
  };
}
