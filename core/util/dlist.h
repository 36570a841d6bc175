/* SPDX-License-Identifier: MIT */
/*
 * dlist.h - the doubly linked list with a head and a tail that the
 * descriptor cache (its idle list) and the range lock (its held and
 * waiting ranges) keep: any struct with prev and next pointers is a node,
 * and the owner's two pointers are the ends.  The caller holds whatever
 * lock guards the list.
 *
 *   head -> [n] <-> [n] <-> [n] <- tail       (NULL at both ends)
 */
#ifndef SFS_DLIST_H
#define SFS_DLIST_H

/* Put node n at the end last of the list first..last, whose links point towards last by fwd
 * and back by back: both ends of the list are one macro, the names swapped. */
#define SFS_DLIST_PUSH_(first, last, n, back, fwd) do { \
		(n)->fwd = NULL;                        \
		(n)->back = (last);                     \
		if (last)                               \
			(last)->fwd = (n);              \
		else                                    \
			(first) = (n);                  \
		(last) = (n);                           \
	} while (0)

/* Put node n first, or last, in the list head..tail. */
#define SFS_DLIST_PUSH_FRONT(head, tail, n) SFS_DLIST_PUSH_(tail, head, n, next, prev)
#define SFS_DLIST_PUSH_BACK(head, tail, n) SFS_DLIST_PUSH_(head, tail, n, prev, next)

/* Take node n (in the list) out of the list head..tail; its own pointers are left as they
 * were. */
#define SFS_DLIST_REMOVE(head, tail, n) do {            \
		if ((n)->prev)                          \
			(n)->prev->next = (n)->next;    \
		else                                    \
			(head) = (n)->next;             \
		if ((n)->next)                          \
			(n)->next->prev = (n)->prev;    \
		else                                    \
			(tail) = (n)->prev;             \
	} while (0)

#endif
