"""Search: the stored chunks (store), their embeddings and BM25 postings, hybrid retrieval with reranking,
cross-reference edges, the question's document scope and spelling correction of query words."""
