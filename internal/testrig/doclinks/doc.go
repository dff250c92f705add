// Package doclinks keeps the links from the project's Markdown (README and docs/) to its
// code right as the code moves.
//
// Every relative link must point at a file that exists. A link to a line (#Lnn) is
// pinned to the text of that line, recorded in testdata/anchors.txt: the test fails when
// the line no longer holds that text. When the text has only moved (lines were added or
// removed above it), `go test ./internal/testrig/doclinks -update` moves the link to the
// occurrence nearest its old place, in every document, and records new links' lines;
// when the text is gone, the link must be re-pointed by hand, since nobody but its
// author knows what it should show now.
//
// It is a test of the documents, not part of the engine: the package holds no code the
// rest of the module imports.
package doclinks
