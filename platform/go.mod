module cozystack.io/platform

go 1.26.0
