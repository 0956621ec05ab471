// Command trimcontract cuts Waldur's official OpenAPI contract down to the operations the site
// agent calls (and the components they reference) and writes the result next to the Waldur
// simulator, which embeds it. It is a development tool: nothing in the product runs it, and it
// never edits the contract by hand-picked rules beyond the operation list in operations.go.
package main
