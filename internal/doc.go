// Package internal holds helpers shared by the packages of this module and
// not meant for import from outside it.
package internal
