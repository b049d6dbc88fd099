# migrd: see issue 5.
