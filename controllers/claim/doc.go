// Package claim decides which objects a controller owns, and adopts or releases them
// through their ControllerRef (the ownerReference with controller: true).
//
// A controller selects its dependents by labels, but labels are shared and mutable, so
// ownership is recorded in the dependent itself. Claim walks the candidates and, for each:
//
//   - owned by this controller (ControllerRef UID equal) and matching: claimed;
//   - owned by it but no longer matching: released (the ref is removed), unless the owner
//     is being deleted;
//   - an orphan (no ControllerRef) that matches: adopted (the ref is added), unless the
//     owner or the orphan is being deleted;
//   - controlled by anyone else: never touched.
//
// Before the first adoption of a Claim the owner is re-read from the server, bypassing
// the cache: a cached owner may already be deleted, or replaced by a new object of the
// same name, and adopting for it would hand pods to the wrong owner. Adoptions and
// releases are JSON merge patches carrying the dependent's uid and resourceVersion as
// preconditions, so a stale cache makes a patch fail with a conflict (retried by the
// caller) instead of overwriting somebody else's change; the other ownerReferences are
// written back as they were.
package claim
