// Package jsonscan finds where JSON white space, strings and values end in a byte slice,
// without decoding them, for the watch-stream frame reader and the object decoder.
package jsonscan
