import type { CollectionSlug } from '../vocabulary/collections.js';
import {
  blocks,
  common,
  type Generator,
  html,
  imageRef,
  intern,
  loc,
  meta,
  NO_SHARES,
  rich,
  slugify,
  status,
  themeDefault,
  workTitle,
} from './sim-doc-parts.js';
import { BLOG_NAMES, CATEGORY_WORDS, PAGE_NAMES, POST_TOPICS } from './sim-word-lists.js';

/** Record generators for pages, blogs and posts. */
export const editorialGenerators = {
  pages: (g, i) => {
    const c = common(g);
    const base = PAGE_NAMES[i % PAGE_NAMES.length] as string;
    const title = i >= PAGE_NAMES.length ? `${base} ${Math.floor(i / PAGE_NAMES.length) + 1}` : base;
    const parent = i > 3 && g.prng.chance(0.4) ? g.ref('pages') : null;
    const slug = `${slugify(title)}`;
    const rel = `/${slug}`;
    return {
      ...c,
      title: loc(title, null),
      richTitle: rich(title),
      richTitle_html: html(title),
      description: loc(`${title} at ${g.tenantName}.`, null),
      richDescription: rich(`${title} at ${g.tenantName}.`),
      richDescription_html: html(`${title} at ${g.tenantName}.`),
      theme: themeDefault(),
      meta: meta(g, title, rel, null),
      slug,
      publishedSlug: slug,
      publishedRelativePath: rel,
      createRedirect: false,
      relativePath: rel,
      displayTitle: loc(title, null),
      image: imageRef(g),
      parent,
      order: i,
      showInNavigation: i < 8,
      showInSearch: true,
      themeTemplate: 'default',
      breadcrumbs: [{ doc: c.id, url: rel, label: title }],
      publishedAt: c.updatedAt,
      url: `${g.site}${rel}`,
      sharedWith: NO_SHARES,
      _status: status(g),
    };
  },
  blogs: (g, i) => {
    const c = common(g);
    const title = `${BLOG_NAMES[i % BLOG_NAMES.length]}${i >= BLOG_NAMES.length ? ` ${Math.floor(i / BLOG_NAMES.length) + 1}` : ''}`;
    const slug = `${slugify(title)}-${i + 1}`;
    return {
      ...c,
      title: loc(title, null),
      richTitle: rich(title),
      richTitle_html: html(title),
      description: loc(`Stories from ${g.tenantName}.`, `Histoires de ${g.tenantName}.`),
      richDescription: rich(`Stories from ${g.tenantName}.`),
      richDescription_html: html(`Stories from ${g.tenantName}.`),
      layout: 'default',
      blocks: blocks(g, title),
      theme: themeDefault(),
      meta: meta(g, title, `/blog/${slug}`, null),
      slug,
      publishedSlug: slug,
      publishedRelativePath: `/blog/${slug}`,
      createRedirect: false,
      image: imageRef(g),
      url: `${g.site}/blog/${slug}`,
      sharedWith: NO_SHARES,
      _status: status(g),
    };
  },
  posts: (g, i) => {
    const c = common(g);
    const [work] = workTitle(g, i + 3);
    const title = `${g.prng.pick(POST_TOPICS)} ${work}`;
    const slug = `${slugify(title)}-${i + 1}`;
    return {
      ...c,
      title: loc(title, null),
      richTitle: rich(title),
      richTitle_html: html(title),
      description: loc(`${title}.`, null),
      richDescription: rich(`${title}.`),
      richDescription_html: html(`${title}.`),
      layout: 'default',
      blocks: blocks(g, title),
      attributes: [],
      meta: meta(g, title, `/blog/posts/${slug}`, null),
      slug,
      publishedSlug: slug,
      publishedRelativePath: `/blog/posts/${slug}`,
      createRedirect: false,
      publishDate: c.createdAt,
      blog: g.ref('blogs'),
      authors: [g.ids.make(Date.parse(c.createdAt))],
      categories: ((w: string) => intern(`cat|${w}`, () => [`cat-${slugify(w)}`]))(g.prng.pick(CATEGORY_WORDS)),
      tags: ((w: string) => intern(`tag|${w}`, () => [`tag-${slugify(w)}`]))(g.prng.pick(CATEGORY_WORDS)),
      image: imageRef(g),
      url: `${g.site}/blog/posts/${slug}`,
      showInSearch: true,
      sharedWith: NO_SHARES,
      _status: status(g),
    };
  },
} satisfies Partial<Record<CollectionSlug, Generator>>;
