// Package c is another package.
package b
