// Package doclinks checks, in its test, that every relative link in the project's
// Markdown (README and docs/) points at a file that exists and, for a #Lnn anchor, at a
// line of code that exists and is not blank: a guide that links to code must not rot as
// the code moves.
package doclinks
