// Package jsonscan finds where JSON white space, strings, values and object members end
// in a byte slice, without decoding them: the one scanner of the watch-stream frame
// reader, the event and list envelopes, and the object codec.
//
// Nothing here decodes or allocates. ValueEnd finds a value's end; Scanner finds it in a
// stream, piece by piece; EachString also shows each string on the way; FirstMember,
// Member and NextMember step through an object's members; Valid checks a document as
// json.Valid does, in one pass. All of them but Valid assume JSON and check only what
// they need: a malformed input gives a wrong end or -1, never a panic.
package jsonscan
