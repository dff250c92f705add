// Package listwatch is kinformer's REST client for the Kubernetes list/watch protocol: the
// first stage of the data path (listwatch → reflector → deltafifo → indexer → handlers).
//
// A Config comes from a kubeconfig (LoadKubeconfig: --kubeconfig, KUBECONFIG with several
// files, ~/.kube/config; tokens, token files, client certificates, exec credential
// plugins) or from a pod's service account (InClusterConfig). A Client speaks HTTP/2 with
// ping health checks over TLS, HTTP/1.1 chunked streams otherwise, limits its request
// rate with a token bucket, retries 429s after the server's Retry-After, and returns
// API errors as *object.StatusError.
//
// Discover resolves "pods", "deploy" or "deployments.v1.apps" to a ResourceInfo; For
// binds it to a namespace and an object type. List pages with limit/continue; Watch
// decodes the event stream incrementally, one bounded frame at a time, from a chunked
// body or a websocket. A malformed frame, an unknown event type or an oversized frame
// ends the stream with a typed error (FrameError, UnknownEventError); an ERROR event ends
// it with the server's StatusError (object.IsGone for 410).
//
// With more than one core (GOMAXPROCS > 1), a watch is read on two goroutines: one of
// its own reads the connection, splits it into frames and validates each, most often in
// one pass, and hands them over in batches (every complete frame already buffered, up to
// 64 frames or 32 KB), at most two batches ahead, so a caller that falls behind still
// holds back the connection; Next decodes them on the caller's goroutine, in order, each object where
// it lies in its frame. Buffered says whether Next has an event ready without waiting
// for the connection. A list page's items are read the same way while the ones before
// them are decoded. The batches are pooled per Client. On one core, Next reads, splits
// and decodes in turn, on one goroutine.
package listwatch
