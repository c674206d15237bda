module cozystack.io/contracts

go 1.26.0
