// Package morloccorpus is test support, imported only by tests: the
// oracle that nexus's tool surface is checked against on the corpus of
// programs compiled by the real morloc compiler (testdata/morloc). It
// holds a port of what morloc's own nexus prints for --mcp-tools
// (MCPTools), JSON documents kept in their key order and printed as
// morloc prints them (Object, Decode, Pretty), and the maps that take
// nexus's deliberate differences back to morloc's form
// (testdata/morloc/README.md, "Deliberate differences"). The argmap tests
// check nexus's tools with it, and the end-to-end tests nexus's binary.
package morloccorpus
