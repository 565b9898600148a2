package sandbox

// Names the external tests use, unexported in the package.
var ErrNoServerBinary = errNoServerBinary
var ErrNotReady = errNotReady

const MySQL = mySQL

var ParseVersion = parseVersion
