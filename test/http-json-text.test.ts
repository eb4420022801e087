import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { writeJsonAnswer } from "../src/http/answer.js";
import { jsonText, serialiseAnswer } from "../src/http/json-text.js";

// Answers with parts already serialised (a search page's leads from PostgreSQL) are written with
// those parts as they are, and read exactly like the same answer built from objects.

describe("serialiseAnswer", () => {
  it("writes each JsonText as its text, in place, and other values as JSON.stringify does", () => {
    const body = {
      data: {
        leads: [jsonText<object>('{"id":1,"name":"a \\"b\\""}'), jsonText<object>('{"id" : 2}')],
        note: "\u0000not a placeholder:0",
        n: 3,
      },
    };
    const { text, spliced } = serialiseAnswer(body);
    expect(spliced).toBe(true);
    expect(text).toBe(
      '{"data":{"leads":[{"id":1,"name":"a \\"b\\""},{"id" : 2}],"note":"\\u0000not a placeholder:0","n":3}}',
    );
    expect(JSON.parse(text)).toEqual({
      data: { leads: [{ id: 1, name: 'a "b"' }, { id: 2 }], note: "\u0000not a placeholder:0", n: 3 },
    });
  });

  it("is JSON.stringify for a body without JsonText", () => {
    const body = { data: { a: [1, "x"], b: null, c: new Date(0) } };
    expect(serialiseAnswer(body)).toEqual({ text: JSON.stringify(body), spliced: false });
  });

  it("outside serialiseAnswer a JsonText stands for its parsed value", () => {
    expect(JSON.stringify({ lead: jsonText<object>('{"id" : 1}') })).toBe('{"lead":{"id":1}}');
  });
});

describe("writeJsonAnswer", () => {
  const app = (checked: boolean) =>
    express().get("/", (_req, res) => {
      writeJsonAnswer(
        res,
        {
          status: 200,
          headers: { "X-Credits-Capped": "true" },
          body: { data: { leads: [jsonText<object>('{"id":7}')] } },
        },
        checked,
      );
    });

  it("sends the spliced text with the type, charset and length res.json gives", async () => {
    for (const checked of [false, true]) {
      const res = await request(app(checked)).get("/").expect(200);
      expect(res.text).toBe('{"data":{"leads":[{"id":7}]}}');
      expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(res.headers["content-length"]).toBe(String(Buffer.byteLength(res.text)));
      expect(res.headers["x-credits-capped"]).toBe("true");
    }
  });
});
