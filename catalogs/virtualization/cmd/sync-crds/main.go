package main

import "cozystack.io/sdk/crdsync"

func main() { crdsync.Main() }
