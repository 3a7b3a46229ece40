// `curl`: a request from the page's origin, with its cookies; answers
// status, headers and the body (text or base64), or an error.
(async (req) => {
  const init = { method: req.method, headers: req.headers, credentials: 'include', redirect: 'follow' };
  if (req.body !== null) init.body = req.body;
  let r;
  try { r = await fetch(req.url, init); } catch (e) { return { error: String(e && e.message || e) }; }
  const headers = {};
  r.headers.forEach((v, k) => { headers[k] = v; });
  const type = r.headers.get('content-type') || '';
  // Read at most req.max bytes; the rest is never fetched.
  const chunks = [];
  let size = 0, truncated = false;
  const reader = r.body ? r.body.getReader() : null;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > req.max) {
      chunks.push(value.subarray(0, req.max - size));
      size = req.max;
      truncated = true;
      reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) { bytes.set(c, at); at += c.length; }
  let text = null;
  if (type === '' || /^text\/|json|xml|javascript|x-www-form-urlencoded/.test(type)) {
    // A cut body may end inside a character: decode it as a stream.
    try { text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: truncated }); } catch (e) {}
  }
  let body = text, encoding = 'text';
  if (text === null) {
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    body = btoa(s);
    encoding = 'base64';
  }
  return { status: r.status, headers, body, body_encoding: encoding, url: r.url, redirected: r.redirected, truncated };
})
